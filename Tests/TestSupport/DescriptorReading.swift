import Glibc

/// Reads from `descriptor` until end of file; the bytes read. A read interrupted by a signal
/// (`EINTR`) is made again; any other error ends the reading with what was read so far.
///
/// For a child program's pipes: Foundation's `FileHandle.readDataToEndOfFile()` and
/// `availableData` trap on `EINTR` (a `try!` inside), and a test thread may take a signal.
public func readToEnd(_ descriptor: Int32) -> [UInt8] {
    var bytes: [UInt8] = []
    while let chunk = readSome(descriptor), !chunk.isEmpty { bytes += chunk }
    return bytes
}

/// One read of at most 64 KiB from `descriptor`, made again on `EINTR`: empty at end of file,
/// nil on any other error.
public func readSome(_ descriptor: Int32) -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count >= 0 { return Array(buffer[0..<count]) }
        if errno != EINTR { return nil }
    }
}
