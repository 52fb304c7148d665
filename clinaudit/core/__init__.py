"""The ground floor: the records that flow between the stages, the id grammar, the rule catalogue, errors, text helpers.

Every stage imports from here; nothing here imports a stage.
"""
