/* unicode_tables.h — private to the tokenizer (wordpiece.c): Unicode
 * lookups over the tables dev/bert_unicode.py generates into
 * unicode_tables.c. */
#ifndef NEXTSTATE_ENCODE_UNICODE_TABLES_H
#define NEXTSTATE_ENCODE_UNICODE_TABLES_H

#include <stdbool.h>
#include <stdint.h>

/* BERT's character classes: letter/other, whitespace, control, mark (Mn),
 * punctuation, CJK ideograph. */
enum { UC_L, UC_W, UC_C, UC_M, UC_P, UC_H };

/* The class of code point c. */
int ns_uc_class(uint32_t c);
/* Rust's char::is_whitespace (the White_Space property). */
bool ns_uc_white_space(uint32_t c);
/* Simple lower-case mapping of c. */
uint32_t ns_uc_lower1(uint32_t c);
/* NFD of c without nonspacing marks, into out (room for 3); returns the count. */
int ns_uc_strip(uint32_t c, uint32_t *out);

#endif
