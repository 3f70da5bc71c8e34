// Graphviz's public C API: the layout/render context (gvc.h) and the graph model (cgraph.h).
// Only NodescopeGraphviz's GraphvizContext imports this module.
#include <graphviz/gvc.h>
#include <graphviz/cgraph.h>
