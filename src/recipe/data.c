/*
 * The recipe table, src/recipe/recipes.json, compiled into the binary
 * as bytes in .rodata with a NUL after them (the assembler's .incbin,
 * from the repository's root, where make runs).  The Makefile names the
 * JSON as a prerequisite of this object, so an edit rebuilds it.
 */
#include "recipe/internal.h"

__asm__(".section .rodata\n"
        ".global recipe_json\n"
        ".type recipe_json, @object\n"
        "recipe_json:\n"
        ".incbin \"src/recipe/recipes.json\"\n"
        ".byte 0\n"
        ".previous\n");
