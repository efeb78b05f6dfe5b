import Foundation

/// The one-line progress indicator on standard error, rewritten in place.
///
/// Standard error so that `--json` output on standard output stays clean; rewritten with a
/// carriage return only when standard error is a terminal, plain lines otherwise (CI logs).
final class Progress {
    private let isTerminal = isatty(STDERR_FILENO) != 0
    private let start = Time.now()
    private var lastWidth = 0

    func show(_ text: String) {
        let elapsed = Double(Time.now() - start) / 1e9
        let line = String(format: "[%5.1fs] %@", elapsed, text)
        if isTerminal {
            let padding = String(repeating: " ", count: max(0, lastWidth - line.count))
            write("\r\(line)\(padding)")
            lastWidth = line.count
        } else {
            write("\(line)\n")
        }
    }

    func finish() {
        if isTerminal, lastWidth > 0 { write("\r\(String(repeating: " ", count: lastWidth))\r") }
        lastWidth = 0
    }

    func warn(_ text: String) {
        finish()
        write("warning: \(text)\n")
    }

    private func write(_ text: String) {
        var text = text
        text.withUTF8 { _ = Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
