// ModelTestMessages: QAbstractItemModelTester's complaints as text a gtest assertion can show.
#pragma once

#include <QLatin1String>
#include <QString>
#include <QStringList>
#include <QtGlobal>

namespace chipfit {

// The tester's Fatal mode would abort the whole test binary; in Warning mode it logs under
// "qt.modeltest", and this collector keeps each of those lines so a test fails with their text. One
// at a time: it installs itself as the process's Qt message handler while it lives.
class ModelTestMessages {
 public:
  ModelTestMessages() {
    instance_ = this;
    previous_ = qInstallMessageHandler(&ModelTestMessages::Handle);
  }
  ~ModelTestMessages() {
    qInstallMessageHandler(previous_);
    instance_ = nullptr;
  }
  ModelTestMessages(const ModelTestMessages&) = delete;
  ModelTestMessages& operator=(const ModelTestMessages&) = delete;

  const QStringList& messages() const { return messages_; }
  QString text() const { return messages_.join(QLatin1Char('\n')); }
  bool empty() const { return messages_.isEmpty(); }

 private:
  static void Handle(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (instance_ && context.category && QLatin1String(context.category) == QLatin1String("qt.modeltest") &&
        type != QtDebugMsg && type != QtInfoMsg) {
      instance_->messages_ << message;
    } else if (instance_ && instance_->previous_) {
      instance_->previous_(type, context, message);
    }
  }

  static inline ModelTestMessages* instance_ = nullptr;
  QtMessageHandler previous_ = nullptr;
  QStringList messages_;
};

}  // namespace chipfit
