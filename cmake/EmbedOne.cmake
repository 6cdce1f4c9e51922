# Writes one .cl file as a byte array (hex bytes: no raw-string delimiter or encoding limits).
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "// Generated from ${IN}\nextern const unsigned char sinew_kernel_${IDENT}[];\nconst unsigned char sinew_kernel_${IDENT}[] = {${bytes}0x00};\n")
