#include "tgc/Pipeline/Pipeline.h"
