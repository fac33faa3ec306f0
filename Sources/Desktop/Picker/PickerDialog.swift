/// One row a dialog offers: `key` comes back when it is chosen, `label` is what the person reads.
public struct PickerOption: Sendable, Equatable {
    public var key: String
    public var label: String
    public init(key: String, label: String) {
        self.key = key
        self.label = label
    }
}

/// A way to ask the person: a zenity or kdialog window, or a prompt on the terminal.
///
/// The folder picker only talks to this interface, so another backend (a GTK dialog, the
/// desktop portal) can take the place of these without touching the picker or share-to.
public protocol PickerDialog {
    /// Shows `options` and returns the key of the one chosen, or nil when the person cancelled.
    func choose(title: String, prompt: String, options: [PickerOption]) throws(PickerFailure) -> String?
    /// Asks for one line of text (a new folder's name); nil when cancelled.
    func askText(title: String, prompt: String) throws(PickerFailure) -> String?
    /// Tells the person that something went wrong, and waits until they have read it.
    func tell(title: String, message: String)
}

/// The picker itself could not be shown (the dialog program crashed, the display went away).
public struct PickerFailure: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
