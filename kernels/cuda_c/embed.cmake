# embed.cmake - writes the bytes of IN as a C array named NAME into OUT (NUL-terminated),
# so kscope carries kscope_cuda.h inside it and finds it wherever it is installed.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE ${OUT} "/* generated from ${IN} by embed.cmake */\nconst unsigned char ${NAME}[] = {${body} 0};\n")
