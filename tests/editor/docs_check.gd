# F1 help as the editor shows it, for every class the extension registers (found through
# ClassDB, not a list of ours): each class, property, method and signal must be on its help page
# with a description, and internal properties and their accessors must not be there. The page is
# EditorHelp's own text (ScriptEditor.goto_help), so the check sees what a user sees: the
# descriptions gdext registers from `///` comments, merged by the editor with ClassDB.
extends RefCounted

const NO_DESCRIPTION := "There is currently no description for this"

var failures: PackedStringArray = []
var _plugin: EditorPlugin


func _init(plugin: EditorPlugin) -> void:
	_plugin = plugin


func _fail(what: String) -> void:
	failures.append(what)
	printerr("EDITOR CHECK FAIL: " + what)


## Classes the extension registers as internal (engine callbacks, no user API): kept out of the
## editor's help and create dialog.
const INTERNAL := ["VatShaderSource"]


## The classes the loaded GDExtensions register.
static func extension_classes() -> PackedStringArray:
	var out: PackedStringArray = []
	for c in ClassDB.get_class_list():
		if ClassDB.class_get_api_type(c) in [ClassDB.API_EXTENSION, ClassDB.API_EDITOR_EXTENSION]:
			out.append(c)
	out.sort()
	return out


static func _find(node: Node, cls: String) -> Node:
	if node.get_class() == cls:
		return node
	for c in node.get_children(true):
		var found := _find(c, cls)
		if found != null:
			return found
	return null


## The help page of `cls` as the editor renders it, or "" if it does not open.
func _help_text(cls: String) -> String:
	var editor := EditorInterface.get_script_editor()
	editor.goto_help("class_name:" + cls)
	for i in 120:
		await _plugin.get_tree().process_frame
		# Each open help tab is an EditorHelp whose RichTextLabel holds the page.
		for page in _all(editor, "EditorHelp"):
			var label := _find(page, "RichTextLabel") as RichTextLabel
			if label == null or not label.is_finished():
				continue
			var text := label.get_parsed_text()
			# The title line is "Class:", some spacing, the class name.
			var first := text.get_slice("\n", 0).strip_edges()
			var before := first.left(first.length() - cls.length())
			if first.begins_with("Class:") and first.ends_with(cls) and not before.right(1).is_valid_identifier():
				return text
	return ""


static func _all(node: Node, cls: String) -> Array[Node]:
	var out: Array[Node] = []
	if node.get_class() == cls:
		out.append(node)
	for c in node.get_children(true):
		out.append_array(_all(c, cls))
	return out


## The entry lines ("● ...") of the help page: one per documented property, method and signal.
static func _entries(text: String) -> PackedStringArray:
	var out: PackedStringArray = []
	for line in text.split("\n"):
		if line.strip_edges().begins_with("●"):
			out.append(line.strip_edges())
	return out


## True when a property entry ("● <type><name> [default: ...]") names `name`.
static func _has_property(entries: PackedStringArray, name: String) -> bool:
	for e in entries:
		var head := e.get_slice(" [default", 0)
		if head != e and head.ends_with(name):
			return true
	return false


## True when a method or signal entry ("● <type> <name>(" or "● <name>(") names `name`.
static func _has_call(entries: PackedStringArray, name: String) -> bool:
	for e in entries:
		if e.contains(" " + name + "(") or e.begins_with("● " + name + "("):
			return true
	return false


func run() -> void:
	var classes := extension_classes()
	print("EDITOR CHECK: F1 help of ", ", ".join(classes))
	for expected in ["VertexAnimation", "VertexAnimationBaker", "AnimatedMeshInstance", "AnimatedActorMeshInstance"]:
		if not classes.has(expected):
			_fail("%s is not among the extension's classes (%s)" % [expected, classes])
	if classes.has("VatCrowdBench"):
		_fail("the benchmark class VatCrowdBench is in the shipped addon")
	for cls in classes:
		if cls in INTERNAL:
			# Registered as internal: the editor's help leaves it out, as it should.
			if not (await _help_text(cls)).is_empty():
				_fail("the internal class %s shows in F1 help" % cls)
			continue
		await _check_class(cls)


func _check_class(cls: String) -> void:
	var text: String = await _help_text(cls)
	if text.is_empty():
		_fail("F1 help for %s does not open" % cls)
		return
	var empties := text.count(NO_DESCRIPTION)
	if empties > 0:
		var lines: PackedStringArray = []
		var prev := ""
		for line in text.split("\n"):
			if line.contains(NO_DESCRIPTION):
				lines.append(prev.strip_edges())
			elif not line.strip_edges().is_empty():
				prev = line
		_fail("%s: %d empty description(s) in F1: %s" % [cls, empties, "; ".join(lines)])
	# The class description: the first paragraph after the "Inherits:" line.
	var after := text.get_slice("Inherits:", 1).get_slice("\n", 1).strip_edges()
	if after.is_empty():
		var body := text.get_slice("Inherits:", 1).split("\n", false)
		after = body[1].strip_edges() if body.size() > 1 else ""
	if after.is_empty() or after.begins_with("Properties") or after.begins_with("Methods"):
		_fail("%s: the class has no description in F1" % cls)
	var entries := _entries(text)
	var accessors := {}
	var internal: PackedStringArray = []
	for p in ClassDB.class_get_property_list(cls, true):
		var usage: int = p.usage
		if usage & (PROPERTY_USAGE_CATEGORY | PROPERTY_USAGE_GROUP | PROPERTY_USAGE_SUBGROUP):
			continue
		var name: String = p.name
		for acc in [ClassDB.class_get_property_setter(cls, name), ClassDB.class_get_property_getter(cls, name)]:
			if not String(acc).is_empty():
				accessors[String(acc)] = true
		if usage & PROPERTY_USAGE_INTERNAL:
			internal.append(name)
			continue
		if usage & (PROPERTY_USAGE_EDITOR | PROPERTY_USAGE_STORAGE) == 0:
			continue
		if not _has_property(entries, name):
			_fail("%s: property %s is missing from F1" % [cls, name])
	for m in ClassDB.class_get_method_list(cls, true):
		var name: String = m.name
		if name.begins_with("_") or accessors.has(name):
			continue
		if not _has_call(entries, name):
			_fail("%s: method %s is missing from F1" % [cls, name])
	for s in ClassDB.class_get_signal_list(cls, true):
		if not _has_call(entries, s.name):
			_fail("%s: signal %s is missing from F1 (%s)" % [cls, s.name, " | ".join(Array(text.split("\n")).filter(func(l): return l.contains(s.name)))])
	for name in internal:
		if _has_property(entries, name) or _has_call(entries, "get_" + name) or _has_call(entries, "set_" + name):
			_fail("%s: internal property %s shows in F1" % [cls, name])
