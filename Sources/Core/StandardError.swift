import Glibc

/// Writes a line to standard error (Core does not use Foundation or print buffering).
func reportToStandardError(_ message: String) {
    let line = message + "\n"
    _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
}
