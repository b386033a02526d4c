;; Blocksworld, four-operator version (nextstate shipped domain).
;;
;; One robot hand moves blocks between the table and towers.  Blocks are
;; untyped objects.  The hand either holds one block or is empty.
;; Operators: pick-up / put-down (table), stack / unstack (towers).
;; Problems name the domain `blocksworld-4ops`.  Predicates and actions are
;; declared in the order of the ACPBench reference, so ids agree with it.

(define (domain blocksworld-4ops)
  (:requirements :strips)

  (:predicates
    (clear ?x)        ; nothing is on ?x and the hand does not hold it
    (handempty)       ; the hand holds nothing
    (holding ?x)      ; the hand holds ?x
    (on ?x ?y)        ; block ?x sits directly on block ?y
    (ontable ?x))     ; block ?x sits on the table

  ;; Take a clear block from the table.
  (:action pick-up
    :parameters (?ob)
    :precondition (and (clear ?ob) (ontable ?ob) (handempty))
    :effect (and (holding ?ob)
                 (not (clear ?ob)) (not (ontable ?ob)) (not (handempty))))

  ;; Put the held block on the table.
  (:action put-down
    :parameters (?ob)
    :precondition (holding ?ob)
    :effect (and (ontable ?ob) (clear ?ob) (handempty)
                 (not (holding ?ob))))

  ;; Put the held block ?ob onto the clear block ?underob.
  (:action stack
    :parameters (?ob ?underob)
    :precondition (and (holding ?ob) (clear ?underob))
    :effect (and (on ?ob ?underob) (clear ?ob) (handempty)
                 (not (holding ?ob)) (not (clear ?underob))))

  ;; Take the clear block ?ob off the block ?underob.
  (:action unstack
    :parameters (?ob ?underob)
    :precondition (and (on ?ob ?underob) (clear ?ob) (handempty))
    :effect (and (holding ?ob) (clear ?underob)
                 (not (on ?ob ?underob)) (not (clear ?ob)) (not (handempty))))
)
