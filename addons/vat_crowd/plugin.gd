# vat_crowd editor plugin. The classes come from the GDExtension; the plugin adds what the
# inspector button cannot: a toast with the bake summary when a baker finishes.
@tool
extends EditorPlugin


func _enter_tree() -> void:
	get_tree().node_added.connect(_on_node_added)


func _exit_tree() -> void:
	if get_tree().node_added.is_connected(_on_node_added):
		get_tree().node_added.disconnect(_on_node_added)


func _on_node_added(node: Node) -> void:
	if node.is_class("VertexAnimationBaker") and not node.is_connected("bake_finished", _on_bake_finished):
		node.connect("bake_finished", _on_bake_finished)


func _on_bake_finished(error: int, summary: String) -> void:
	var severity := EditorToaster.SEVERITY_INFO if error == OK else EditorToaster.SEVERITY_ERROR
	EditorInterface.get_editor_toaster().push_toast("vat_crowd: " + summary.get_slice("\n", 0), severity)
