// GoogleTest entry point for widget tests: one QApplication for the whole process, before any widget.
#include <gtest/gtest.h>

#include <QApplication>
#include <QThreadPool>

// Read by AddressSanitizer at start-up when the sanitize build links it, ignored otherwise; ASAN_OPTIONS
// still overrides it. POCL, loaded by device discovery on a pool thread, leaves that thread's alternate
// signal stack in a state ASan cannot unmap when the thread exits ("unable to unmap" CHECK failure).
extern "C" const char* __asan_default_options() { return "use_sigaltstack=0"; }

int main(int argc, char** argv) {
  // A test run never opens windows on someone's desktop; an explicit QT_QPA_PLATFORM (xcb to watch) wins.
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  ::testing::InitGoogleTest(&argc, argv);  // first, so Qt never sees --gtest_* flags
  QApplication app(argc, argv);
  const int failed = RUN_ALL_TESTS();
  // Pool threads end before main returns: libcrypto (model hashing on a pool thread) frees every thread's
  // state in its exit handler, and a pool thread that exits afterwards would free its own again.
  QThreadPool::globalInstance()->waitForDone();
  return failed;
}
