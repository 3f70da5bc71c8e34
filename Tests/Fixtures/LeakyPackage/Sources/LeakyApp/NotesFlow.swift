import Nodes

/// The notes screen's node. Its context keeps a save callback that captures the context itself:
/// a retain cycle that keeps every closed notes context alive.
public final class NotesFlow: AbstractFlow<NotesContext, HeadlessViewController> {
    /// A notes node.
    public init() {
        super.init(context: NotesContext(workers: []), viewController: HeadlessViewController(title: "Notes"))
    }
}

/// The notes' context.
public final class NotesContext: AbstractContext<CancellationToken> {
    /// Called to save the notes; set while active, and (the bug) never cleared.
    public var onSave: (() -> Void)?
    /// How many times the notes were saved.
    public private(set) var saves = 0

    public override func didBecomeActive() {
        onSave = { self.saves += 1 }
    }
}

extension AppFlow {
    /// Opens the notes.
    @discardableResult
    public func openNotes() -> NotesFlow {
        let notes = NotesFlow()
        viewController.present(notes.getViewController())
        attach(starting: notes)
        return notes
    }

    /// Closes the notes.
    public func closeNotes() {
        guard let notes = firstSubFlow(ofType: NotesFlow.self) else { return }
        detach(ending: notes)
        viewController.dismiss(notes.getViewController())
    }
}
