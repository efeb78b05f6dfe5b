/// The process's table of mode names: each distinct name gets the next number, for good.
///
/// Modes are named by strings in the API and compared by number everywhere else (see
/// ``Loop/Mode``). A program uses a handful of modes, so the table never needs to forget one.
enum ModeNames {
    /// The numbers of the two modes every process has (inlined as constants by ``Loop/Mode``).
    static let defaultIndex = 0
    static let commonIndex = 1

    private struct Table {
        var indices: [String: Int] = ["kRunLoopDefaultMode": defaultIndex, "kRunLoopCommonModes": commonIndex]
        var names: [String] = ["kRunLoopDefaultMode", "kRunLoopCommonModes"]
    }

    private static let table = Lock(Table())

    /// The number of `name`, given it now if it has none.
    static func index(of name: String) -> Int {
        table.withLock { table in
            if let index = table.indices[name] { return index }
            table.names.append(name)
            table.indices[name] = table.names.count - 1
            return table.names.count - 1
        }
    }

    /// The name numbered `index`.
    static func name(at index: Int) -> String {
        table.withLock { $0.names[index] }
    }
}
