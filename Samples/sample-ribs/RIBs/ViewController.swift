/// A headless view controller: it only records what it presents, so that the sample can run
/// without UIKit. Views are as "dumb" as RIBs want them: they forward taps to a listener.
class ViewController {
    let title: String
    private(set) var presented: [ViewController] = []

    init(title: String) {
        self.title = title
    }

    func present(_ viewController: ViewController) {
        presented.append(viewController)
    }

    func dismiss(_ viewController: ViewController) {
        presented.removeAll { $0 === viewController }
    }

    /// The first view of type `T` on screen from here, searching what is presented.
    func find<T: ViewController>(_ type: T.Type) -> T? {
        if let match = self as? T { return match }
        for child in presented.reversed() {
            if let match = child.find(type) { return match }
        }
        return nil
    }
}
