import NodesDebug

/// The app feature: a navigation stack whose first screen is the main word list.
protocol AppGraph: FeatureGraph {
    var rootViewController: NavigationController { get }
}

protocol AppBuilder {
    func build() -> AppGraph
}

final class AppBuilderImpl: AppBuilder {
    private let dependencies: AppDependencies

    init(dependencies: AppDependencies) {
        self.dependencies = dependencies
    }

    func build() -> AppGraph {
        let navigation = NavigationController()
        let mainWordList = MainWordListBuilderImpl(
            store: dependencies.store, navigationController: navigation, injectsLeak: dependencies.injectsLeak)
        return AppGraphImpl(rootViewController: navigation, mainWordListBuilder: mainWordList)
    }
}

final class AppGraphImpl: AppGraph {
    let rootViewController: NavigationController
    private let mainWordListBuilder: MainWordListBuilder
    private var mainWordList: MainWordListGraph?

    init(rootViewController: NavigationController, mainWordListBuilder: MainWordListBuilder) {
        self.rootViewController = rootViewController
        self.mainWordListBuilder = mainWordListBuilder
    }

    var parts: [(object: AnyObject, role: ObjectRole)] { [(rootViewController, .view)] }

    func didAttach(as node: NodeID) {
        let main = mainWordListBuilder.build()
        mainWordList = main
        rootViewController.setRoot(main.viewController)
        FeatureTree.attach(main, under: node)
    }
}
