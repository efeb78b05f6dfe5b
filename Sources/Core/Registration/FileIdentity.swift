import SystemPackage

/// Which file a descriptor names: device and inode, as `fstat` reports them (swift-system's
/// `Stat`).
///
/// A descriptor number outlives the file it was opened for when it is closed and reused: a
/// version-1 source and the io_uring backend keep the identity of the file they were made
/// for, and compare it with the file the number names now before watching it again (D8).
package struct FileIdentity: Hashable, Sendable {
    let device: DeviceID
    let inode: Inode

    /// The identity of the file `descriptor` names now; `nil` when it is not open.
    package init?(of descriptor: Int32) {
        guard descriptor >= 0, let info = try? FileDescriptor(rawValue: descriptor).stat() else { return nil }
        self.init(info)
    }

    /// The identity of the file `info` describes.
    package init(_ info: Stat) {
        device = info.deviceID
        inode = info.inode
    }
}

extension Stat {
    /// Whether the file is always ready, so that no backend can watch it: a regular file or a
    /// directory.
    package var isAlwaysReady: Bool { type == .regular || type == .directory }
}
