// Reference kernel tests: tensor ops (being written).
#include <gtest/gtest.h>
