extension Dictionary {
    /// Runs `update` on the value for `key` in place, if there is one.
    ///
    /// `dictionary[key]?.mutatingMethod()` goes through the optional subscript's modify
    /// accessor, which allocates on every call (measured: three allocations each); a pass
    /// makes several such calls. Updating through the value's position allocates nothing.
    mutating func update<R>(_ key: Key, _ update: (inout Value) -> R) -> R? {
        guard let index = index(forKey: key) else { return nil }
        return update(&values[index])
    }
}
