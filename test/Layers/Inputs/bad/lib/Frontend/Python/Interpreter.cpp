// The interpreter may use Common, not the .trace reader above it.
#include "Frontend/Common/AtenCall.h"
#include "Frontend/Trace/TraceFile.h"
#include "../Export/ExportFormat.h"
