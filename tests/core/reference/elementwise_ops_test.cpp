// Reference kernel tests: elementwise ops (being written).
#include <gtest/gtest.h>
