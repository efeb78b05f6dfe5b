import Glibc

/// The names in the directory at `path` ("." and ".." left out), with the descriptor the
/// listing had open while it read them (in `/proc/self/fd` it lists itself); nil when the
/// directory cannot be opened.
public func directoryListing(_ path: String) -> (names: [String], ownDescriptor: Int32)? {
    guard let directory = opendir(path) else { return nil }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
        let name = entryName(entry)
        if name != ".", name != ".." { names.append(name) }
    }
    return (names, dirfd(directory))
}

/// The name of a directory entry, read in place up to its terminating zero.
///
/// Not `entry.pointee.d_name`: that copies all 256 bytes of the field, and the kernel's record
/// is only as long as its name, so for the last entry of `readdir`'s buffer the copy reads past
/// the buffer's end (AddressSanitizer: heap-buffer-overflow).
private func entryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
    let offset = MemoryLayout<dirent>.offset(of: \.d_name)!
    return String(cString: (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self))
}
