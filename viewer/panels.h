// The side panels of upshot, one widget per file: the legend (legendmodel.h), the histogram of
// state durations (histogramwidget.h), the statistics of the visible window (statswidget.h), the
// wait-state patterns (waitstateswidget.h) and the communication matrix (commmatrixwidget.h).
#pragma once

#include "commmatrixwidget.h"
#include "histogramwidget.h"
#include "legendmodel.h"
#include "statswidget.h"
#include "waitstateswidget.h"
