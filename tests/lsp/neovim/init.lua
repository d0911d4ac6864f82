-- A second, independent LSP client for the language server: Neovim's built-in one, headless.
-- Started by tests/lsp/test_neovim.py; writes what Neovim received as JSON and quits.
local out = os.getenv("TORCHLINT_NVIM_OUT")
local client = vim.lsp.start_client({
  name = "torchlint",
  cmd = { os.getenv("TORCHLINT_PYTHON"), "-m", "torchlint.lsp" },
  root_dir = vim.fn.getcwd(),
})
vim.cmd("edit train.py")
vim.lsp.buf_attach_client(0, client)
local ok = vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 100)
local found = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
  table.insert(found, { lnum = d.lnum, code = code, message = d.message, source = d.source })
end
local f = io.open(out, "w")
f:write(vim.fn.json_encode({ ok = ok, diagnostics = found }))
f:close()
vim.cmd("qa!")
