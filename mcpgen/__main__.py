from mcpgen.generator.entry import main

main()
