#include "imgwarm_codecs.h"
int iw_codecs_version(void) { return 1; }
