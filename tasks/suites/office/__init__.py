"""The office suite: LibreOffice tasks whose judges read the saved files' cells (formulas
as written, values as computed), on the desktop kind (host LibreOffice) or the vm kind
(the `office` image)."""
