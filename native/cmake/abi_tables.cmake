# abi_tables.cmake - writes the tables abi.c describes the public ABI with, read from
# include/iogate.h at build time, so that nothing of the header is copied by hand:
#   - every public struct: its members in order, each with its C type and array lengths
#     (the compiler adds offset and size), for iog_describe_struct;
#   - every constant: each #define IOG_* whose value is a number or an expression of numbers,
#     and each enum value, for iog_describe_constants.
# Run as a script: cmake -DHEADER=include/iogate.h -DOUT=build/generated/abi_tables.inc -P
# A declaration it cannot read is a build error naming it, never a silently missing row.

if(NOT HEADER OR NOT OUT)
  message(FATAL_ERROR "abi_tables.cmake: pass -DHEADER=<iogate.h> -DOUT=<file>")
endif()
file(READ "${HEADER}" text)
# CMake lists are ;-separated: C's semicolons become @ before anything is split.
string(REPLACE ";" "@" text "${text}")
string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" " " text "${text}")  # /* comments */
string(REGEX REPLACE "//[^\n]*" "" text "${text}")
string(REGEX REPLACE "\\\\\n" " " text "${text}")  # continued lines

set(out "/* Generated from iogate.h by cmake/abi_tables.cmake: do not edit. */\n\n")

# -- structs ------------------------------------------------------------------------------
string(REGEX MATCHALL "struct iog_[a-z0-9_]+ {[^}]*}@" bodies "${text}")
set(table "")
foreach(body IN LISTS bodies)
  string(REGEX MATCH "^struct (iog_[a-z0-9_]+) {([^}]*)}@$" _ "${body}")
  set(name "${CMAKE_MATCH_1}")
  string(REPLACE "@" ";" decls "${CMAKE_MATCH_2}")
  set(rows "")
  foreach(decl IN LISTS decls)
    string(REGEX REPLACE "[ \t\n]+" " " decl "${decl}")
    string(STRIP "${decl}" decl)
    if(decl STREQUAL "")
      continue()
    endif()
    if(NOT decl MATCHES
       "^((const )?(struct [a-z0-9_]+|[a-z0-9_]+)( ?\\*)?) ?([a-z0-9_]+)((\\[[A-Z0-9_]+\\])*)$")
      message(FATAL_ERROR "${HEADER}: struct ${name}: cannot read the member '${decl}' "
                          "(one member a declaration, TYPE NAME[N][M] at most)")
    endif()
    set(type "${CMAKE_MATCH_1}")
    set(member "${CMAKE_MATCH_5}")
    string(REGEX MATCHALL "[A-Z0-9_]+" dims "${CMAKE_MATCH_6}")
    list(LENGTH dims ndims)
    set(d0 0)
    set(d1 0)
    if(ndims GREATER 2)
      message(FATAL_ERROR "${HEADER}: struct ${name}: ${member} has more than two dimensions")
    elseif(ndims EQUAL 2)
      list(GET dims 0 d0)
      list(GET dims 1 d1)
    elseif(ndims EQUAL 1)
      list(GET dims 0 d0)
    endif()
    string(APPEND rows "    FIELD(${name}, ${member}, \"${type}\", ${d0}, ${d1}),\n")
  endforeach()
  string(APPEND out "static const struct iog_layout_field ${name}_fields[] = {\n${rows}}@\n\n")
  string(APPEND table "    {\"${name}\", sizeof(struct ${name}), ${name}_fields, "
                      "COUNT(${name}_fields)},\n")
endforeach()
string(APPEND out "static const struct struct_desc structs[] = {\n${table}}@\n\n")

# -- constants ----------------------------------------------------------------------------
set(rows "")
string(REGEX MATCHALL "#define IOG_[A-Z0-9_]+[ \t]+[^\n]+" defines "${text}")
foreach(define IN LISTS defines)
  string(REGEX MATCH "^#define (IOG_[A-Z0-9_]+)[ \t]+(.*)$" _ "${define}")
  set(constant "${CMAKE_MATCH_1}")
  string(STRIP "${CMAKE_MATCH_2}" value)
  # a number, or an expression of numbers and IOG_ constants (not an attribute, a string)
  if(value MATCHES "^[-+*/<>() \t0-9A-Za-z_]+$" AND value MATCHES "[0-9]"
     AND NOT value MATCHES "__|\"")
    string(APPEND rows "    CONSTANT(${constant}),\n")
  endif()
endforeach()
string(REGEX MATCHALL "enum iog_[a-z0-9_]+ {[^}]*}" enums "${text}")
foreach(enum IN LISTS enums)
  string(REGEX MATCH "{([^}]*)}" _ "${enum}")
  string(REPLACE "," ";" members "${CMAKE_MATCH_1}")
  foreach(member IN LISTS members)
    string(REGEX MATCH "^[ \t\n]*(IOG_[A-Z0-9_]+)" _ "${member}")
    if(CMAKE_MATCH_1)
      string(APPEND rows "    CONSTANT(${CMAKE_MATCH_1}),\n")
    endif()
  endforeach()
endforeach()
string(APPEND out "static const struct iog_constant constants[] = {\n${rows}}@\n")

string(REPLACE "@" ";" out "${out}")
# Written only when it changes: a build after an unrelated edit compiles nothing again.
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL out)
  file(WRITE "${OUT}" "${out}")
endif()
