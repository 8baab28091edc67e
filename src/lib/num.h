/*
 * num: a decimal number read whole from a string, for the places that
 * once used the ato* family (banned by lint: it cannot say "not a number"
 * and overflow is undefined).  Any thread may call it.
 */
#ifndef LIB_NUM_H
#define LIB_NUM_H

/*
 * s as a decimal long: an optional sign and digits, nothing before or
 * after, within long's range.  Anything else (NULL, "", "12x", " 1",
 * an overflow) gives def.
 */
long num_long(const char *s, long def);

#endif
