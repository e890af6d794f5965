#ifndef IMGWARM_CODECS_H
#define IMGWARM_CODECS_H
#include <stddef.h>
#include <stdint.h>
/* Filled in by the validation work (issue 4). */
int iw_codecs_version(void);
#endif
