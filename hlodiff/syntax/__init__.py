"""HLO text: scanning, parsing, reading values, printing, and the unchanged pass.

``parser`` turns text into the model (hlodiff/model.py) with the coarse
grammar grammar/hlo.lark over ``lexer``'s tokens; ``pieces`` builds
instructions from those tokens; ``values`` reads shapes, operands, attribute
values and literals; ``reader`` reads them lazily for the model; ``opcodes``
is HLO's vocabulary; ``printer`` writes a module back as text; ``unchanged``
finds what two texts share before either is parsed; ``grammars`` loads the
Lark grammars.
"""
