extension FixedWidthInteger {
    /// `value` rounded toward zero, clamped to the type's range, NaN as zero: the one way a
    /// floating-point number becomes a whole one here. `Int64(x)` traps on `inf`, `NaN`
    /// or anything beyond the type, and a `Double` from outside can be any of those.
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= Double(Self.max) {
            // Double(Self.max) rounds up to a power of two that the type cannot hold.
            self = Self.max
        } else if value <= Double(Self.min) {
            self = Self.min
        } else {
            self.init(value)
        }
    }
}
