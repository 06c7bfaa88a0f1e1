"""The text layer: YAML as the user wrote it. A bounded reader and node accessors (``yamlnodes``), what
it refuses (``yamlrefusals``), what plain scalars mean (``yamltags``), the writer (``yamlwriter``),
edits written back into the original text (``textedit``), an object in the form kustomize writes
(``written_form``), a block ResourceList cut into its items (``layout``) a stream cut into its
documents (``documents``), and what go-yaml makes of a plain scalar (``goyaml``).

May import: ``values``.
"""
