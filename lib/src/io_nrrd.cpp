// Placeholder until the I/O module lands.
#include "splineview/io.h"
