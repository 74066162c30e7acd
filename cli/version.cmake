# Writes OUT, a header defining GPT_TRACE_GIT as `git describe --always --dirty` of the checkout at
# SRC, or "" when SRC is not a git checkout (a source tarball). Run at every build; OUT is rewritten
# only when the text changes, so only cli/version.c is recompiled after a commit.
set(describe "")
if(EXISTS "${SRC}/.git")
	execute_process(COMMAND git describe --always --dirty --tags WORKING_DIRECTORY "${SRC}"
		OUTPUT_VARIABLE describe RESULT_VARIABLE result OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
	if(NOT result EQUAL 0)
		set(describe "")
	endif()
endif()
set(text "#define GPT_TRACE_GIT \"${describe}\"\n")
set(old "")
if(EXISTS "${OUT}")
	file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
	file(WRITE "${OUT}" "${text}")
endif()
