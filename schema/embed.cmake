# Turns a text file into a C header holding it as a NUL-terminated char array, so that the writer
# carries schema/schema.sql inside libgpt_inject.so. Run as: cmake -DIN=.. -DOUT=.. -DNAME=.. -P
file(READ ${IN} content HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," content "${content}")
file(WRITE ${OUT} "/* Generated from ${IN} by schema/embed.cmake; do not edit. */\n"
	"static const char ${NAME}[] = {${content} 0x00};\n")
