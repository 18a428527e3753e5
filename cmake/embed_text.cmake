# Writes a C file defining `const char NAME[]` with the bytes of IN (a text file embedded
# in the library, e.g. the evaluation's default.yaml). Run with -DIN= -DOUT= -DNAME=.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" hex "${hex}")
set(text "/* Generated from ${IN} by cmake/embed_text.cmake; do not edit. */\n")
string(APPEND text "extern const char ${NAME}[];\nconst char ${NAME}[] = {\n${hex}0x00};\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
