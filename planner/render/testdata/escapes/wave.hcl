# A wave for the renderer tests of user text: lot titles that try to make a
# link, a table column, an autolink, or reach the terminal with control
# characters (ESC, BEL, a C1 CSI). Every format must show them as text.

wave "escapes" {}

lot "link" {
  title = "\\[x\\](https://evil.example) and www.evil.example"
  run   = "true"
}

lot "column" {
  title = "a \\| b | c"
  run   = "true"
}

lot "terminal" {
  title = "red \u001b[31mtext\u001b[0m bell \u0007 csi \u009b2J end"
  run   = "true"
}
