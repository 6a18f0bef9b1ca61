; ModuleID = '__compute_module_multiply_reduce_fusion_kernel_module'
source_filename = "__compute_module_multiply_reduce_fusion_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(readwrite, target_mem: none) uwtable
define noalias noundef ptr @multiply_reduce_fusion(ptr nofree readonly captures(none) %0) local_unnamed_addr #0 {
multiply_reduce_fusion_wrapped.exit:
  %1 = getelementptr inbounds nuw i8, ptr %0, i64 24
  %2 = load ptr, ptr %1, align 8, !invariant.load !3
  %3 = load ptr, ptr %2, align 8, !invariant.load !3, !dereferenceable !4
  tail call void @llvm.experimental.noalias.scope.decl(metadata !5)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !8)
  %4 = load float, ptr %3, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %5 = fmul float %4, 2.000000e+00
  %6 = getelementptr inbounds nuw i8, ptr %3, i64 4
  %7 = load float, ptr %6, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %8 = fmul float %7, 2.000000e+00
  %9 = tail call reassoc float @llvm.maximum.f32(float %5, float %8)
  %10 = getelementptr inbounds nuw i8, ptr %3, i64 8
  %11 = load float, ptr %10, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %12 = fmul float %11, 2.000000e+00
  %13 = tail call reassoc float @llvm.maximum.f32(float %9, float %12)
  %14 = getelementptr inbounds nuw i8, ptr %3, i64 12
  %15 = load float, ptr %14, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %16 = fmul float %15, 2.000000e+00
  %17 = tail call reassoc float @llvm.maximum.f32(float %13, float %16)
  %18 = getelementptr inbounds nuw i8, ptr %2, i64 16
  %19 = load ptr, ptr %18, align 8, !invariant.load !3, !dereferenceable !10
  store float %17, ptr %19, align 4, !alias.scope !8, !noalias !5
  ret ptr null
}

; Function Attrs: mustprogress nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.maximum.f32(float, float) #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @llvm.experimental.noalias.scope.decl(metadata) #2

attributes #0 = { mustprogress nofree norecurse nosync nounwind willreturn memory(readwrite, target_mem: none) uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { mustprogress nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 1}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 16}
!5 = !{!6}
!6 = distinct !{!6, !7, !"multiply_reduce_fusion_wrapped: argument 0"}
!7 = distinct !{!7, !"multiply_reduce_fusion_wrapped"}
!8 = !{!9}
!9 = distinct !{!9, !7, !"multiply_reduce_fusion_wrapped: argument 1"}
!10 = !{i64 4}
