/// What presenters may ask about the user.
protocol UserInteractorInput: AnyObject {
    func logIn(name: String) -> User
    var currentUser: User? { get }
    func rename(to name: String) -> User?
}

/// The business logic of the user model: one interactor per data model, as the seed suggests,
/// used by every scene that deals with the user (each scene has its own instance).
final class UserInteractor: UserInteractorInput {
    private let store: UserStore

    init(store: UserStore) {
        self.store = store
    }

    func logIn(name: String) -> User {
        let user = User(name: name)
        store.currentUser = user
        return user
    }

    var currentUser: User? { store.currentUser }

    func rename(to name: String) -> User? {
        store.currentUser?.name = name
        return store.currentUser
    }
}
