// chipfit-gui: the Qt front end's entry point; everything it shows comes from the same core as the CLI.
#include <QApplication>
#include <QThreadPool>
#include <cstdio>
#include <filesystem>
#include <string_view>

#include "app/mainwindow.h"
#include "chipfit/version.h"
#include "core/runtime/allocator.h"

namespace {

constexpr char kUsage[] =
    "Usage: chipfit-gui [--db FILE] [--shape NAME=1x3x224x224 ...] [--run ID] [--page NAME] [MODEL.onnx]\n"
    "                   [Qt options]\n"
    "Opens the chipfit workbench window, with MODEL open when given. For headless profiling and reports use\n"
    "`chipfit` (chipfit --help); both record runs in the same store.\n"
    "\n"
    "  --db FILE      run store (SQLite) to record runs in (default: the one `chipfit` uses)\n"
    "  --shape NAME=DIMS  bind an input's dynamic dims, as in the CLI (repeatable; editable on the Model page)\n"
    "  --run ID       open stored run ID (chipfit history lists them) on the Layers page\n"
    "  --page NAME    start on page NAME (model, targets, run, layers, graph, compare, recommend, history,\n"
    "                 devices)\n"
    "  -h, --help     show this help and exit\n"
    "  -v, --version  show the version and exit\n";

}  // namespace

int main(int argc, char** argv) {
  chipfit::KeepFreedMemoryForReuse();
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
  QApplication::setOrganizationName(QStringLiteral("chipfit"));
  QApplication::setApplicationName(QStringLiteral("chipfit"));
  QApplication::setApplicationDisplayName(QStringLiteral("chipfit"));
  QApplication::setApplicationVersion(QStringLiteral(CHIPFIT_VERSION));

  // QApplication has taken its own options (-platform …); what is left is ours.
  std::filesystem::path db;
  QString model;
  QStringList shapes;
  qint64 run_id = -1;
  QString page;
  const QStringList args = QApplication::arguments();
  for (qsizetype i = 1; i < args.size(); ++i) {
    if (args[i] == QLatin1String("--db") && i + 1 < args.size()) {
      db = args[++i].toStdString();
    } else if (args[i].startsWith(QLatin1String("--db="))) {
      db = args[i].mid(5).toStdString();
    } else if (args[i] == QLatin1String("--shape") && i + 1 < args.size()) {
      shapes << args[++i];
    } else if (args[i].startsWith(QLatin1String("--shape="))) {
      shapes << args[i].mid(8);
    } else if (args[i] == QLatin1String("--run") && i + 1 < args.size()) {
      bool ok = false;
      run_id = args[++i].toLongLong(&ok);
      if (!ok || run_id <= 0) {
        std::fprintf(stderr, "chipfit-gui: --run needs a run id (chipfit history lists them), not '%s'\n",
                     args[i].toLocal8Bit().constData());
        return 2;
      }
    } else if (args[i] == QLatin1String("--page") && i + 1 < args.size()) {
      page = args[++i];
    } else if (args[i].startsWith(QLatin1Char('-'))) {
      std::fprintf(stderr, "chipfit-gui: unknown option '%s'\n%s", args[i].toLocal8Bit().constData(), kUsage);
      return 2;
    } else if (model.isEmpty()) {
      model = args[i];
    } else {
      std::fprintf(stderr, "chipfit-gui: one model at a time ('%s' and '%s')\n", model.toLocal8Bit().constData(),
                   args[i].toLocal8Bit().constData());
      return 2;
    }
  }

  int code = 2;
  {
    chipfit::MainWindow window(&chipfit::DiscoverDevices, nullptr, db);
    window.show();
    if (!model.isEmpty()) window.openModel(model, shapes);
    if (run_id > 0) window.openStoredRun(run_id, page.isEmpty());
    if (!page.isEmpty() && !window.showPageNamed(page)) {
      std::fprintf(stderr, "chipfit-gui: no page '%s'\n%s", page.toLocal8Bit().constData(), kUsage);
    } else {
      code = QApplication::exec();
    }
  }  // closing the window asks the work its pages started on the pool (model analysis, store jobs) to stop
  // Pool threads end before main returns: libcrypto (model hashing on a pool thread) frees every thread's
  // state in its exit handler, and a pool thread that exits afterwards would free its own again.
  QThreadPool::globalInstance()->waitForDone();
  return code;
}
