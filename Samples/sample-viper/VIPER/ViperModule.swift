/// What a module builder returns: the parts of one VIPER scene. Once the coordinator has put
/// the view on screen, the module lives by the references between its parts: the navigation
/// stack keeps the view, the view keeps its presenter, the presenter keeps its interactor and
/// its router. The presenter and the router point back (to the view, to the coordinator) weakly.
struct ViperModule {
    /// The module's name in the tree, such as `ProfileEditModule`.
    let name: String
    let view: ViewController
    let presenter: AnyObject
    let interactor: AnyObject
    let router: AnyObject
}
