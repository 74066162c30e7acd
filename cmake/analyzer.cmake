# libgpt_analyzer: the layers of the offline analyzer in one static library, lowest first: the trace
# loader (loader/: ours and nsys exports as canonical views), the time-ordered walk with its
# consumers, phases and the rules (rules/), the cross-rank summaries and merge (ranks/), and the
# command families over them, each in its own folder: stats/, report/ (and report/html/), export/,
# diff/ (docs/layout.md). Included by the top-level CMakeLists.txt; scripts/check-layers.sh keeps
# includes pointing downward. Sources are globbed: adding a file needs no edit here.
file(GLOB GPT_ANALYZER_SOURCES CONFIGURE_DEPENDS
	${CMAKE_SOURCE_DIR}/loader/*.c
	${CMAKE_SOURCE_DIR}/rules/*.c
	${CMAKE_SOURCE_DIR}/ranks/*.c
	${CMAKE_SOURCE_DIR}/output/*.c
	${CMAKE_SOURCE_DIR}/stats/*.c
	${CMAKE_SOURCE_DIR}/report/*.c
	${CMAKE_SOURCE_DIR}/report/html/*.c
	${CMAKE_SOURCE_DIR}/export/*.c
	${CMAKE_SOURCE_DIR}/diff/*.c)
if(GPT_ANALYZER_SOURCES)
	add_library(gpt_analyzer STATIC ${GPT_ANALYZER_SOURCES})
	target_include_directories(gpt_analyzer PUBLIC ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
		${PROTOBUF_C_INCLUDE})
	find_package(Threads REQUIRED)
	target_link_libraries(gpt_analyzer PUBLIC gpt_import gpt_common SQLite::SQLite3 ZLIB::ZLIB Threads::Threads
		${PROTOBUF_C_STATIC} m)
	target_compile_options(gpt_analyzer PRIVATE ${GPT_TRACE_SANITIZE_FLAGS})
	# The Perfetto exporter's generated protobuf-c sources (owned by the export work).
	include(${CMAKE_SOURCE_DIR}/export/proto/perfetto.cmake)
else()
	add_library(gpt_analyzer INTERFACE)
	target_include_directories(gpt_analyzer INTERFACE ${CMAKE_SOURCE_DIR})
	target_link_libraries(gpt_analyzer INTERFACE gpt_common SQLite::SQLite3)
endif()
