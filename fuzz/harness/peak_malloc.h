#include <stdint.h>
void iw_peak_begin(void);
uint64_t iw_peak_end(void);
