// chipfit-gui: the Qt front end's entry point; everything it shows comes from the same core as the CLI.
#include <QApplication>
#include <cstdio>
#include <string_view>

#include "app/mainwindow.h"
#include "chipfit/version.h"

namespace {

constexpr char kUsage[] =
    "Usage: chipfit-gui [Qt options]\n"
    "Opens the chipfit workbench window. For headless profiling and reports use `chipfit` (chipfit --help).\n"
    "\n"
    "  -h, --help     show this help and exit\n"
    "  -v, --version  show the version and exit\n";

}  // namespace

int main(int argc, char** argv) {
  // Answered before QApplication exists, because QApplication aborts without a display and a version
  // query should work over ssh and in CI.
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--version" || arg == "-v") {
      std::printf("chipfit-gui %s (%s)\n", CHIPFIT_VERSION, CHIPFIT_GIT_REVISION);
      return 0;
    }
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  }

  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("chipfit"));
  QApplication::setApplicationDisplayName(QStringLiteral("chipfit"));
  QApplication::setApplicationVersion(QStringLiteral(CHIPFIT_VERSION));

  chipfit::MainWindow window;
  window.show();
  return QApplication::exec();
}
