# The Perfetto exporter's protobuf-c code, generated at build time from the trimmed
# perfetto_trace.proto (included by analyzer/CMakeLists.txt). The generated files land in
# ${CMAKE_BINARY_DIR}/perfetto, so sources include "perfetto/perfetto_trace.pb-c.h".
set(GPT_PERFETTO_PROTO ${CMAKE_CURRENT_LIST_DIR}/perfetto_trace.proto)
set(GPT_PERFETTO_GEN_DIR ${CMAKE_BINARY_DIR}/perfetto)
set(GPT_PERFETTO_GEN_C ${GPT_PERFETTO_GEN_DIR}/perfetto_trace.pb-c.c)
set(GPT_PERFETTO_GEN_H ${GPT_PERFETTO_GEN_DIR}/perfetto_trace.pb-c.h)
file(MAKE_DIRECTORY ${GPT_PERFETTO_GEN_DIR})
add_custom_command(
	OUTPUT ${GPT_PERFETTO_GEN_C} ${GPT_PERFETTO_GEN_H}
	COMMAND ${PROTOC_C} --c_out=${GPT_PERFETTO_GEN_DIR} -I${CMAKE_CURRENT_LIST_DIR}
		${GPT_PERFETTO_PROTO}
	DEPENDS ${GPT_PERFETTO_PROTO}
	COMMENT "protoc-c perfetto_trace.proto"
	VERBATIM)
# Generated code is not ours to keep warning-free under -Wmissing-prototypes and friends.
set_source_files_properties(${GPT_PERFETTO_GEN_C} PROPERTIES GENERATED TRUE COMPILE_OPTIONS "-w")
target_sources(gpt_analyzer PRIVATE ${GPT_PERFETTO_GEN_C} ${GPT_PERFETTO_GEN_H})
