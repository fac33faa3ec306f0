import Queue

extension QueueStore {
    /// Writes the "why it waits" note of a queued row directly, as a gate of the agent would.
    func noteWaiting(_ id: Int64, _ reason: Reason?) throws {
        try database.run("""
            UPDATE transfers SET reason_code = ?, reason_message = ?, reason_action = ?, reason_detail = ?
            WHERE id = ? AND state = 'queued'
            """, [.optionalText(reason?.code.rawValue), .optionalText(reason?.message), .optionalText(reason?.action),
                  .optionalText(reason?.detail), .int(id)])
    }
}
