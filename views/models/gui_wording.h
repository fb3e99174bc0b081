// GuiWording: core messages name the CLI's flags ("give --data", "--no-accuracy-guard"); on a page they
// must name the page's controls instead. One table of rewordings, used wherever a core text is shown.
#pragma once

#include <QString>

namespace chipfit {

// `text` with every CLI flag or command it mentions replaced by the control that does the same in the
// GUI ("--no-accuracy-guard" → "untick Accuracy guard"); text without one comes back unchanged.
QString GuiWording(const QString& text);
QString GuiWording(const std::string& text);

}  // namespace chipfit
