# Writes one .cl file as a C++ char array (hex bytes: no raw-string delimiter limits).
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "// Generated from ${IN}\nextern const char sinew_kernel_${IDENT}[];\nconst char sinew_kernel_${IDENT}[] = {${bytes}0x00};\n")
