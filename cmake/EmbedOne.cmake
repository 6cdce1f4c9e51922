# Writes one .cl file as a byte array named SYMBOL (hex bytes: no raw-string delimiter or encoding
# limits), NUL-terminated. Run by cmake/EmbedKernels.cmake.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "// Generated from ${IN}\nextern const unsigned char ${SYMBOL}[];\nconst unsigned char ${SYMBOL}[] = {${bytes}0x00};\n")
