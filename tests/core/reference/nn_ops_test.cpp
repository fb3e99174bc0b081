// Reference kernel tests: nn ops (being written).
#include <gtest/gtest.h>
