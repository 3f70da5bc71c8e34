/// Builds a module: the one duty the module manager leaves to others.
protocol ModuleMaking {
    func make() -> Module
}

/// A module maker from a closure.
struct ModuleMaker: ModuleMaking {
    let body: () -> Module
    func make() -> Module { body() }
}

/// A step of navigation: a module to build. Each module adds a static function in an extension
/// of this type, which is how the rest of the app learns that the module exists.
struct ModuleRoutingStep {
    let maker: ModuleMaking
}
